//! Host CPU and block-device counters, sampled at interval boundaries.
