/* A frame's candidates, as every family's kernels write them
 * (gst/detect/core/candidates.h): [0] the count, [1] windows a family had to
 * drop because a buffer of its own was full, [2..3] unused, then one
 * (window index, score bits) pair per candidate; pairs past the capacity are
 * counted but not stored (the host reports the frame as truncated). */
#define CAND_HEADER 4

inline void candidates_reset (__global uint *c)
{
  c[0] = 0;
  c[1] = 0;
}

/* A frame's start: a family's 16 list counters (core/integral.h) and its
 * candidates. */
inline void frame_reset (__global uint *counters, __global uint *c)
{
  for (int k = 0; k < 16; k++)
    counters[k] = 0;
  candidates_reset (c);
}

/* Stores candidate number i (from the count). */
inline void candidate_put (__global uint *c, uint i, uint capacity, uint win, float score)
{
  if (i < capacity)
    vstore2 ((uint2) (win, as_uint (score)), i, c + CAND_HEADER);
}

/* Appends a candidate. */
inline void candidate_emit (__global uint *c, uint capacity, uint win, float score)
{
  candidate_put (c, atomic_inc (&c[0]), capacity, win, score);
}

/* Appends the kept lanes' candidates in lane order, one atomic for the
 * work-group (compact.cl).  Called by the whole work-group; a caller that
 * calls again first passes a barrier (scratch and sbase are rewritten). */
inline void candidates_append (int keep, uint win, float score, __global uint *c, uint capacity, __local int *scratch,
                               __local uint *sbase, int lid)
{
  int total;
  const int rank = wg_rank (keep, lid, scratch, &total);
  const uint first = wg_reserve (total, &c[0], sbase, lid);
  if (keep)
    candidate_put (c, first + (uint) rank, capacity, win, score);
}
