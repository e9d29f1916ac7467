/* clock.h — the monotonic wall clock that every timing in srd reads. */
#ifndef SRD_CLOCK_H
#define SRD_CLOCK_H

/* Seconds since an arbitrary fixed point; only differences mean anything. */
double srd_seconds(void);
double srd_milliseconds(void);

#endif
