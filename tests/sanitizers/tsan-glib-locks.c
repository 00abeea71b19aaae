/* Preloaded by the tsan test setup (tests/meson.build): tells ThreadSanitizer
 * about GLib's locks.  Debian 12's GLib (2.74) implements GMutex and GCond
 * with raw futex system calls, which TSan does not see, so every object lock
 * of GStreamer (GST_OBJECT_LOCK, pad and bus locks, GstHarness's queues)
 * would look like no lock at all.  Each call below runs GLib's own and adds
 * the happens-before edge the lock gives: an unlock releases, a lock
 * acquires, a wait releases and then acquires its mutex, a signal releases
 * the condition and a wait acquires it.  g_once_init_leave releases its
 * location, which g_once_init_enter acquires (its fast path is an atomic load
 * in the caller, which TSan sees; its slow path waits inside GLib).  GRecMutex and GRWLock are pthread locks in this GLib, which
 * TSan intercepts itself.  Plain edges, no lock state: GLib's calls to
 * itself do not come through here, and an edge more or less cannot unbalance
 * anything (docs/reliability.md, ThreadSanitizer run). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <glib.h>
#include <sanitizer/tsan_interface.h>
#include <stdio.h>
#include <stdlib.h>

/* `real`: GLib's function `name`, looked up on first use. */
#define REAL(ret, name, ...)                                                      \
  static ret (*real_##name) (__VA_ARGS__);                                        \
  ret (*real) (__VA_ARGS__) = __atomic_load_n (&real_##name, __ATOMIC_ACQUIRE);   \
  if (!real) {                                                                    \
    real = (ret (*) (__VA_ARGS__)) dlsym (RTLD_NEXT, #name);                      \
    if (!real) {                                                                  \
      fprintf (stderr, "tsan-glib-locks: no %s in the libraries loaded\n", #name); \
      abort ();                                                                   \
    }                                                                             \
    __atomic_store_n (&real_##name, real, __ATOMIC_RELEASE);                      \
  }

void g_mutex_lock (GMutex *mutex)
{
  REAL (void, g_mutex_lock, GMutex *);
  real (mutex);
  __tsan_acquire (mutex);
}

gboolean g_mutex_trylock (GMutex *mutex)
{
  REAL (gboolean, g_mutex_trylock, GMutex *);
  const gboolean locked = real (mutex);
  if (locked)
    __tsan_acquire (mutex);
  return locked;
}

void g_mutex_unlock (GMutex *mutex)
{
  REAL (void, g_mutex_unlock, GMutex *);
  __tsan_release (mutex);
  real (mutex);
}

void g_cond_wait (GCond *cond, GMutex *mutex)
{
  REAL (void, g_cond_wait, GCond *, GMutex *);
  __tsan_release (mutex);
  real (cond, mutex);
  __tsan_acquire (mutex);
  __tsan_acquire (cond);
}

gboolean g_cond_wait_until (GCond *cond, GMutex *mutex, gint64 end_time)
{
  REAL (gboolean, g_cond_wait_until, GCond *, GMutex *, gint64);
  __tsan_release (mutex);
  const gboolean signalled = real (cond, mutex, end_time);
  __tsan_acquire (mutex);
  __tsan_acquire (cond);
  return signalled;
}

void g_cond_signal (GCond *cond)
{
  REAL (void, g_cond_signal, GCond *);
  __tsan_release (cond);
  real (cond);
}

void g_cond_broadcast (GCond *cond)
{
  REAL (void, g_cond_broadcast, GCond *);
  __tsan_release (cond);
  real (cond);
}

gboolean (g_once_init_enter) (volatile void *location)
{
  REAL (gboolean, g_once_init_enter, volatile void *);
  const gboolean first = real (location);
  __tsan_acquire ((void *) location);
  return first;
}

void (g_once_init_leave) (volatile void *location, gsize result)
{
  REAL (void, g_once_init_leave, volatile void *, gsize);
  __tsan_release ((void *) location);
  real (location, result);
}
