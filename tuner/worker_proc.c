/* worker_proc.c: fork/exec of `kt worker` over two pipes. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "worker_proc.h"
#include "kt_env.h"

int wp_spawn(wp_proc *p, const char *exe, const char *db, const char *target, int gpu, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->to_fd = p->from_fd = -1;
    p->gpu = gpu;
    int in[2], out[2];
    if (pipe(in)) return snprintf(err, errlen, "pipe: %s", strerror(errno)), -1;
    if (pipe(out)) {
        close(in[0]);
        close(in[1]);
        return snprintf(err, errlen, "pipe: %s", strerror(errno)), -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(in[0]); close(in[1]); close(out[0]); close(out[1]);
        return snprintf(err, errlen, "fork: %s", strerror(errno)), -1;
    }
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[0]); close(in[1]); close(out[0]); close(out[1]);
        char dev[16];
        snprintf(dev, sizeof dev, "%d", gpu);
        execl(exe, exe, "worker", "--db", db, "--target", target, "--device", dev, (char *)NULL);
        fprintf(stderr, "worker: exec %s: %s\n", exe, strerror(errno));
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    fcntl(in[1], F_SETFD, FD_CLOEXEC);
    fcntl(out[0], F_SETFD, FD_CLOEXEC);
    p->pid = pid;
    p->to_fd = in[1];
    p->from_fd = out[0];
    return 0;
}

int wp_send(wp_proc *p, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0 || n >= (int)sizeof line - 1 || p->to_fd < 0) return -1;
    line[n++] = '\n';
    for (int off = 0; off < n;) {
        ssize_t w = write(p->to_fd, line + off, (size_t)(n - off));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;   /* EPIPE: the worker is gone (SIGPIPE is ignored by the sweep) */
        off += (int)w;
    }
    return 0;
}

void wp_fill(wp_proc *p)
{
    if (p->from_fd < 0 || p->eof) return;
    if (p->len == sizeof p->buf) p->len = 0;   /* a line longer than the buffer: drop it */
    ssize_t r = read(p->from_fd, p->buf + p->len, sizeof p->buf - p->len);
    if (r < 0 && errno == EINTR) return;
    if (r <= 0) p->eof = 1;
    else p->len += (size_t)r;
}

int wp_next_line(wp_proc *p, char *line, size_t len)
{
    char *nl = memchr(p->buf, '\n', p->len);
    if (!nl) return 0;
    size_t n = (size_t)(nl - p->buf);
    snprintf(line, len, "%.*s", (int)n, p->buf);
    memmove(p->buf, nl + 1, p->len - n - 1);
    p->len -= n + 1;
    return 1;
}

void wp_stop(wp_proc *p, char *how, size_t howlen)
{
    if (how && howlen) how[0] = 0;
    if (p->to_fd >= 0) close(p->to_fd);
    if (p->pid > 0) {
        int status = 0;
        pid_t r = waitpid(p->pid, &status, WNOHANG);
        if (r == 0) {
            kill(p->pid, SIGKILL);
            waitpid(p->pid, &status, 0);
        }
        if (how && howlen) {
            if (WIFSIGNALED(status)) snprintf(how, howlen, "killed by signal %d", WTERMSIG(status));
            else snprintf(how, howlen, "exit %d", WEXITSTATUS(status));
        }
    }
    if (p->from_fd >= 0) close(p->from_fd);
    p->to_fd = p->from_fd = -1;
    p->pid = 0;
}

int wp_find_exe(char *out, size_t len, char *err, size_t errlen)
{
    const char *env = kt_env_get("KT_WORKER_EXE");
    if (env && *env) {
        snprintf(out, len, "%s", env);
    } else {
        Dl_info info;
        if (!dladdr((void *)wp_find_exe, &info) || !info.dli_fname)
            return snprintf(err, errlen, "cannot locate libkt to find the kt binary; set KT_WORKER_EXE"), -1;
        char dir[1024];
        snprintf(dir, sizeof dir, "%s", info.dli_fname);
        char *slash = strrchr(dir, '/');
        if (slash) *slash = 0; else snprintf(dir, sizeof dir, ".");
        /* libkt.so lives in out/lib; a program linking libkt.a lives in out/bin */
        snprintf(out, len, "%s/../bin/kt", dir);
        if (access(out, X_OK) != 0) snprintf(out, len, "%s/kt", dir);
    }
    if (access(out, X_OK) != 0)
        return snprintf(err, errlen, "worker binary %s not found or not executable (build it with make, or set KT_WORKER_EXE)", out), -1;
    return 0;
}
