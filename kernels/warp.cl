/* Scans and votes of the GPU schedule's cascade_first (cascade.cl).
 * With WARP_PTX (NVIDIA devices, whose OpenCL compiler takes inline PTX), the
 * 32 work-items of a warp (local ids 32k .. 32k + 31 of a one-dimensional
 * work-group whose size is a multiple of 32) exchange registers and votes
 * directly, and a scan over a work-group takes one barrier instead of two per
 * step through local memory.  (pyramid_rows' scans measured slower so on an
 * H100: docs/benchmarks.md.) */
#ifdef WARP_PTX
inline uint warp_ballot (int p)
{
  uint r;
  asm volatile ("{ .reg .pred q; setp.ne.s32 q, %1, 0; vote.sync.ballot.b32 %0, q, 0xffffffff; }"
                : "=r"(r)
                : "r"(p));
  return r;
}

inline uint warp_lanemask_lt (void)
{
  uint r;
  asm ("mov.u32 %0, %%lanemask_lt;" : "=r"(r));
  return r;
}

/* The value of the lane d below in the warp; a lane with none below gets its
 * own. */
inline uint warp_up (uint v, int d)
{
  uint r;
  asm volatile ("shfl.sync.up.b32 %0, %1, %2, 0, 0xffffffff;" : "=r"(r) : "r"(v), "r"(d));
  return r;
}

#endif
