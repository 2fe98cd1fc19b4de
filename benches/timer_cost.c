// What a timer costs on this machine, without tsumo: the figures behind BENCHMARKS.md's
// "Pacing at wrk2's cost". Build and run pinned to one CPU:
//
//   gcc -O2 -o /tmp/timer_cost benches/timer_cost.c && taskset -c 0 /tmp/timer_cost
//
// 1. A busy thread's loop, 2 s each: how much of it is left when a timerfd is re-armed every
//    50 µs (a) after each expiry, (b) before it expires (always the CPU's earliest timer, so each
//    re-arm re-programs the timer hardware), (c) for a time after the CPU's next timer (no
//    re-programming). The CPU a re-arm costs is the loop's loss over the number of re-arms.
// 2. A thread that sleeps on a timerfd (epoll_wait) to absolute deadlines 50 µs, 200 µs and 1 ms
//    apart: CPU per sleep and wake-up (rusage) and how late it woke (p50, p99).
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <time.h>

static uint64_t now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000ull + t.tv_nsec;
}

static uint64_t cpu(void) {
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    return (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1000000000ull +
           (r.ru_utime.tv_usec + r.ru_stime.tv_usec) * 1000ull;
}

static void arm(int fd, uint64_t at) {
    struct itimerspec spec = {{0, 0}, {at / 1000000000, at % 1000000000}};
    timerfd_settime(fd, TFD_TIMER_ABSTIME, &spec, 0);
}

static int cmp(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

// Loop iterations per µs while re-arming per `mode` every `gap` ns; `*arms` counts the re-arms.
static double busy(int mode, uint64_t gap, long *arms) {
    int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
    uint64_t t0 = now(), end = t0 + 2000000000ull, next = t0 + gap;
    volatile long spin = 0;
    long work = 0;
    *arms = 0;
    for (uint64_t t; (t = now()) < end; work++) {
        if (mode > 0 && t >= next) {
            if (mode == 1) next = t + gap, arm(fd, next);                  // after each expiry
            if (mode == 2) next = t + gap / 5, arm(fd, t + gap);           // before it expires
            if (mode == 3) next = t + gap, arm(fd, t + 1000000000ull);     // later than the tick
            (*arms)++;
        }
        for (int i = 0; i < 200; i++) spin++;
    }
    return work / ((now() - t0) / 1000.0);
}

static void sleeps(uint64_t interval) {
    int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK), ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.fd = fd}, out[4];
    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
    int n = (int)(2000000000ull / interval);
    uint64_t *late = malloc(sizeof(uint64_t) * n), t0 = now() + 1000000, c0 = cpu();
    for (int i = 0; i < n; i++) {
        uint64_t deadline = t0 + i * interval;
        arm(fd, deadline);
        while (now() < deadline) epoll_wait(ep, out, 4, -1);
        late[i] = now() - deadline;
    }
    uint64_t spent = cpu() - c0;
    qsort(late, n, sizeof(uint64_t), cmp);
    printf("  sleeps %4lu us apart: %6.1f us CPU per sleep and wake-up, woke late p50 %6.1f us, "
           "p99 %7.1f us\n", (unsigned long)(interval / 1000), spent / 1000.0 / n,
           late[n / 2] / 1000.0, late[n * 99 / 100] / 1000.0);
    free(late);
}

int main(void) {
    long arms;
    double base = busy(0, 50000, &arms);
    printf("1. busy loop, %.2f iterations/us with no timer\n", base);
    const char *what[] = {"", "re-armed after each expiry", "re-armed before it expires",
                          "re-armed for after the next tick"};
    for (int mode = 1; mode <= 3; mode++) {
        double left = busy(mode, 50000, &arms);
        double lost_us = (1 - left / base) * 2e6;
        printf("  %-34s %6ld re-arms, %5.1f%% of the loop lost: %5.2f us per re-arm\n",
               what[mode], arms, 100 * (1 - left / base), arms ? lost_us / arms : 0);
    }
    printf("2. a thread sleeping on a timerfd\n");
    sleeps(50000);
    sleeps(200000);
    sleeps(1000000);
    return 0;
}
