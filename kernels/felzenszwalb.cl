/* Felzenszwalb's HOG cells as dlib's FHOG (hog.cl) and cv::dpm (dpm.cl) both
 * compute them: the pieces written once for both, as generators of functions
 * over the caller's types (T: float, double or vectors of them; I: the int
 * of T's lanes; S: T's scalar; LIT: S's literal of a number). */

/* NAME (fx, fy): the orientation of 18 (9 directions, either sign) whose dot
 * product with the gradient (fx, fy) is the largest, 0 where none is
 * positive: dlib's 8-lane loop's selects (its scalar loop's and cv::dpm's
 * if / else if pick the same, lane by lane where T is a vector). */
#define HOG_SNAP(NAME, T, I, S, LIT)                                                                             \
  inline I NAME (T fx, T fy)                                                                                   \
  {                                                                                                            \
    const S d0[9] = {LIT (1.0000), LIT (0.9397),  LIT (0.7660),  LIT (0.5000), LIT (0.1736),                   \
                     LIT (-0.1736), LIT (-0.5000), LIT (-0.7660), LIT (-0.9397)};                              \
    const S d1[9] = {LIT (0.0000), LIT (0.3420), LIT (0.6428), LIT (0.8660), LIT (0.9848),                     \
                     LIT (0.9848), LIT (0.8660), LIT (0.6428), LIT (0.3420)};                                  \
    T best = 0;                                                                                                \
    I o = 0;                                                                                                   \
    for (int k = 0; k < 9; k++) {                                                                              \
      const T dot = fx * d0[k] + fy * d1[k];                                                                   \
      const I c1 = dot > best;                                                                                 \
      best = c1 ? dot : best;                                                                                  \
      o = c1 ? (I) k : o;                                                                                      \
      const I c2 = -dot > best;                                                                                \
      best = c2 ? -dot : best;                                                                                 \
      o = c2 ? (I) (k + 9) : o;                                                                                \
    }                                                                                                          \
    return o;                                                                                                  \
  }

/* NAME (h): a cell's energy from its 18 bins h (in address space SPACE): the
 * sum over the 9 directions of the squared sum of both signs. */
#define HOG_ENERGY(NAME, T, SPACE)                                                                               \
  inline T NAME (SPACE const T *h)                                                                             \
  {                                                                                                            \
    T e = 0;                                                                                                   \
    for (int k = 0; k < 9; k++)                                                                                \
      e += (h[k] + h[k + 9]) * (h[k] + h[k + 9]);                                                              \
    return e;                                                                                                  \
  }

/* NAME (x, c, &i): the cells a pixel coordinate x votes into (cells of c
 * pixels): the first, i, in *i, and the second's share of the vote (the
 * first's is 1 minus it). */
#define HOG_SHARE(NAME, T, LIT)                                                                                  \
  inline T NAME (int x, int c, int *i)                                                                         \
  {                                                                                                            \
    const T p = ((T) x + LIT (0.5)) / (T) c - LIT (0.5);                                                       \
    *i = (int) floor (p);                                                                                      \
    return p - (T) *i;                                                                                         \
  }
