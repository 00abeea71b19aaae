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
