/* worker_proc.h: the sweep's side of a worker process (`kt worker`): spawn it on a GPU, send it
 * lines, collect its lines, notice when it dies or hangs, kill it. Prefix wp_. */
#ifndef KT_WORKER_PROC_H
#define KT_WORKER_PROC_H
#include <stddef.h>
#include <sys/types.h>

typedef struct wp_proc {
    pid_t pid;               /* 0 when not running */
    int to_fd, from_fd;
    int gpu;
    char buf[16384];         /* bytes read but not yet returned as lines */
    size_t len;
    int eof;
} wp_proc;

/* Start `exe worker --db DB --target T --device gpu`. */
int wp_spawn(wp_proc *p, const char *exe, const char *db, const char *target, int gpu, char *err, size_t errlen);
/* Send one line (newline added). -1 when the worker is gone. */
int wp_send(wp_proc *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Read what is available (call when poll says from_fd is readable). Sets eof on end of stream. */
void wp_fill(wp_proc *p);
/* Next complete line from the buffer: 1 and line filled, 0 none buffered. */
int wp_next_line(wp_proc *p, char *line, size_t len);
/* Kill (SIGKILL) if running, reap, close pipes; describe how it ended ("exit 3", "signal 9"). */
void wp_stop(wp_proc *p, char *how, size_t howlen);
/* Where the kt binary is: $KT_WORKER_EXE, else ../bin/kt beside the library holding this code. */
int wp_find_exe(char *out, size_t len, char *err, size_t errlen);

#endif
