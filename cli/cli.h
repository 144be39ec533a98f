/* cli.h: kt's subcommands. Each returns the process exit status: 0 ok, 1 failed, 2 usage. */
#ifndef KT_CLI_H
#define KT_CLI_H
int kt_cmd_gen(int argc, char **argv);
int kt_cmd_targets(int argc, char **argv);
int kt_cmd_problems(int argc, char **argv);
int kt_cmd_explain(int argc, char **argv);
int kt_cmd_dump(int argc, char **argv);
int kt_cmd_worker(int argc, char **argv);
int kt_cmd_ops(int argc, char **argv);
#endif
