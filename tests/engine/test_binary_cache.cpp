// The program binary cache on disk (cl/cache.h) against hostile entries: a
// small program built through cl::build_program with a cache folder of the
// test's own, its entry then damaged in each way of the table below; each
// time the next build must succeed from source (not from the cache), with a
// warning, the entry must be a valid one again, and the build after that
// must come from the cache.  Also: a folder that cannot be created or
// written, two processes writing the same entry at once.  Nothing may block:
// every case runs under alarm().
//
// Modes of the same program, run as child processes:
//   --writer DIR KEY ID N      write the entry of KEY in DIR N times
//   --build DIR                build the program once with DIR as the cache
// The read-only folder's cases run in children forked before this process
// opens the device (as nobody where this is root, whom modes do not stop).
#include "check.h"
#include "cl/cache.h"
#include "cl/cl.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace gpudetect;

namespace {

const char kSource[] = "__kernel void add_one (__global int *v) { v[get_global_id (0)] += 1; }\n";
const uint64_t kSourceHash = cl::fnv1a (kSource, sizeof kSource - 1);

// --- warnings, watchdog ------------------------------------------------------

int g_warnings = 0;
void count_warning (const char *message) {
  g_warnings++;
  std::fprintf (stderr, "  warning: %s\n", message);
}

char g_case[128] = "setup";
void on_alarm (int) {
  const char head[] = "binary-cache: blocked in case ";
  (void) !write (2, head, sizeof head - 1);
  (void) !write (2, g_case, std::strlen (g_case));
  (void) !write (2, "\n", 1);
  _exit (2);
}
// Each case gets this long before the test fails (one PoCL compile of the
// small program takes well under a second with PoCL's own cache warm, a few
// seconds cold on a loaded machine).
constexpr unsigned kCaseSeconds = 20;
void start_case (const char *name) {
  std::snprintf (g_case, sizeof g_case, "%s", name);
  g_warnings = 0;
  alarm (kCaseSeconds);
}

// --- files ---------------------------------------------------------------------

std::vector<unsigned char> read_file (const std::string &path) {
  std::vector<unsigned char> out;
  int fd = open (path.c_str (), O_RDONLY | O_NOFOLLOW);
  if (fd < 0)
    return out;
  unsigned char buf[65536];
  for (ssize_t n; (n = read (fd, buf, sizeof buf)) > 0;)
    out.insert (out.end (), buf, buf + n);
  close (fd);
  return out;
}

bool write_file (const std::string &path, const std::vector<unsigned char> &bytes) {
  int fd = open (path.c_str (), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    return false;
  bool ok = write (fd, bytes.data (), bytes.size ()) == static_cast<ssize_t> (bytes.size ());
  return close (fd) == 0 && ok;
}

// Names in `dir` (without . and ..).
std::vector<std::string> list_dir (const std::string &dir) {
  std::vector<std::string> names;
  if (DIR *d = opendir (dir.c_str ())) {
    while (dirent *e = readdir (d))
      if (std::strcmp (e->d_name, ".") != 0 && std::strcmp (e->d_name, "..") != 0)
        names.push_back (e->d_name);
    closedir (d);
  }
  return names;
}

void remove_tree (const std::string &path) {
  struct stat st = {};
  if (lstat (path.c_str (), &st) != 0)
    return;
  if (S_ISDIR (st.st_mode)) {
    chmod (path.c_str (), 0755);
    for (const std::string &n : list_dir (path))
      remove_tree (path + "/" + n);
    rmdir (path.c_str ());
  } else
    unlink (path.c_str ());
}

void put_u64 (std::vector<unsigned char> *b, size_t at, uint64_t v) {
  for (int i = 0; i < 8; i++)
    (*b)[at + i] = static_cast<unsigned char> (v >> (8 * i));
}
uint64_t get_u64 (const std::vector<unsigned char> &b, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++)
    v |= static_cast<uint64_t> (b[at + i]) << (8 * i);
  return v;
}

// --- building ------------------------------------------------------------------

struct Build {
  bool ok = false;
  bool from_cache = false;
};

// The program built through build_program with the cache in `dir`, and its
// kernel run once (a program that builds but does not run is no success).
Build build (const cl::Device &dev, const std::string &dir, const std::string &options = {}) {
  setenv ("GPUDETECT_CACHE_DIR", dir.c_str (), 1);
  Build b;
  cl::Program prog;
  if (Error e = cl::build_program (dev, kSource, kSourceHash, options, &prog, &b.from_cache)) {
    std::fprintf (stderr, "  build failed: %s\n", e.message.c_str ());
    return b;
  }
  cl::Kernel k;
  cl::Mem buf;
  const cl_int in[4] = {1, 2, 3, 4};
  cl_int got[4] = {};
  const size_t global = 4;
  if (cl::create_kernel (prog, "add_one", &k) || cl::make_buffer (dev, &buf, sizeof in, CL_MEM_READ_WRITE, in) ||
      cl::set_arg (k.get (), 0, buf) != CL_SUCCESS ||
      clEnqueueNDRangeKernel (dev.queue.get (), k.get (), 1, nullptr, &global, nullptr, 0, nullptr, nullptr) !=
          CL_SUCCESS ||
      clEnqueueReadBuffer (dev.queue.get (), buf.get (), CL_TRUE, 0, sizeof got, got, 0, nullptr, nullptr) !=
          CL_SUCCESS) {
    std::fprintf (stderr, "  the built program does not run\n");
    return b;
  }
  b.ok = got[0] == 2 && got[1] == 3 && got[2] == 4 && got[3] == 5;
  return b;
}

uint64_t key_of (const cl::Device &dev, const std::string &options = {}) {
  return cl::cache_key (dev.info, kSourceHash, options, {});
}

// What lies at `path` is a regular file holding a verified entry of `key`.
bool valid_entry (const std::string &path, uint64_t key) {
  struct stat st = {};
  std::vector<unsigned char> payload;
  std::string why;
  if (lstat (path.c_str (), &st) != 0 || !S_ISREG (st.st_mode))
    return false;
  const cl::CacheRead r = cl::read_cache_entry (path, key, &payload, &why);
  if (r == cl::CacheRead::Bad)
    std::fprintf (stderr, "  %s: %s\n", path.c_str (), why.c_str ());
  return r == cl::CacheRead::Hit;
}

// Nothing but the entry (no temporary file left behind).
bool only_entry (const std::string &dir, const std::string &name) {
  const std::vector<std::string> names = list_dir (dir);
  for (const std::string &n : names)
    if (n != name)
      std::fprintf (stderr, "  left in the cache folder: %s\n", n.c_str ());
  return names.size () == 1 && names[0] == name;
}

std::string g_self; // this program, for the child processes

// Runs this program with `args`; the child waits to start until `*start`
// (a pipe's write end) is closed.
pid_t spawn (const std::vector<std::string> &args, int *start) {
  // everything the child needs made before fork (no allocation after it:
  // PoCL's threads may hold the allocator's lock)
  std::vector<char *> argv{const_cast<char *> (g_self.c_str ())};
  for (const std::string &a : args)
    argv.push_back (const_cast<char *> (a.c_str ()));
  argv.push_back (nullptr);
  int p[2] = {-1, -1};
  if (pipe (p) != 0)
    return -1;
  const pid_t pid = fork ();
  if (pid == 0) {
    close (p[1]);
    char c;
    (void) !read (p[0], &c, 1);
    close (p[0]);
    execv (g_self.c_str (), argv.data ());
    _exit (127);
  }
  close (p[0]);
  *start = p[1];
  return pid;
}

bool exited_ok (pid_t pid, const char *what) {
  int status = 0;
  if (pid < 0 || waitpid (pid, &status, 0) != pid)
    return false;
  if (WIFEXITED (status) && WEXITSTATUS (status) == 0)
    return true;
  std::fprintf (stderr, "  %s: child %s %d\n", what, WIFEXITED (status) ? "exited with" : "killed by signal",
                WIFEXITED (status) ? WEXITSTATUS (status) : WTERMSIG (status));
  return false;
}

// --- damage ----------------------------------------------------------------------

std::vector<unsigned char> with_u64 (std::vector<unsigned char> b, size_t at, uint64_t v) {
  put_u64 (&b, at, v);
  return b;
}
std::vector<unsigned char> with_flip (std::vector<unsigned char> b, size_t at) {
  b[at] ^= 0x5a;
  return b;
}
std::vector<unsigned char> first (const std::vector<unsigned char> &b, size_t n) {
  return std::vector<unsigned char> (b.begin (), b.begin () + static_cast<long> (n));
}

struct Damage {
  const char *name;
  // Turns the valid entry `good` at `path` into the damaged one.
  bool (*apply) (const std::string &path, const std::vector<unsigned char> &good);
  bool replaced; // whether the damaged entry can be replaced by a valid one
};

const Damage kDamages[] = {
    {"empty", [] (const std::string &p, const std::vector<unsigned char> &) { return write_file (p, {}); }, true},
    {"truncated-header",
     [] (const std::string &p, const std::vector<unsigned char> &g) { return write_file (p, first (g, 20)); }, true},
    {"truncated",
     [] (const std::string &p, const std::vector<unsigned char> &g) {
       return write_file (p, first (g, g.size () - 1));
     },
     true},
    {"half",
     [] (const std::string &p, const std::vector<unsigned char> &g) { return write_file (p, first (g, g.size () / 2)); },
     true},
    {"appended",
     [] (const std::string &p, const std::vector<unsigned char> &g) {
       std::vector<unsigned char> b = g;
       b.push_back ('x');
       return write_file (p, b);
     },
     true},
    {"magic",
     [] (const std::string &p, const std::vector<unsigned char> &g) {
       return write_file (p, with_flip (g, cl::cache_magic_offset + 2));
     },
     true},
    {"version",
     [] (const std::string &p, const std::vector<unsigned char> &g) {
       return write_file (p, with_flip (g, cl::cache_version_offset));
     },
     true},
    {"reserved",
     [] (const std::string &p, const std::vector<unsigned char> &g) {
       return write_file (p, with_flip (g, cl::cache_version_offset + 4));
     },
     true},
    {"key",
     [] (const std::string &p, const std::vector<unsigned char> &g) {
       return write_file (p, with_flip (g, cl::cache_key_offset + 7));
     },
     true},
    {"length-larger",
     [] (const std::string &p, const std::vector<unsigned char> &g) {
       return write_file (p, with_u64 (g, cl::cache_length_offset, get_u64 (g, cl::cache_length_offset) + 1));
     },
     true},
    {"length-smaller",
     [] (const std::string &p, const std::vector<unsigned char> &g) {
       return write_file (p, with_u64 (g, cl::cache_length_offset, get_u64 (g, cl::cache_length_offset) - 1));
     },
     true},
    {"length-huge",
     [] (const std::string &p, const std::vector<unsigned char> &g) {
       return write_file (p, with_u64 (g, cl::cache_length_offset, uint64_t{1} << 63));
     },
     true},
    {"checksum",
     [] (const std::string &p, const std::vector<unsigned char> &g) {
       return write_file (p, with_flip (g, cl::cache_checksum_offset + 3));
     },
     true},
    {"payload-byte",
     [] (const std::string &p, const std::vector<unsigned char> &g) {
       return write_file (p, with_flip (g, cl::cache_header_size + (g.size () - cl::cache_header_size) / 2));
     },
     true},
    // past the size bound, header consistent with the file's size (sparse)
    {"oversized",
     [] (const std::string &p, const std::vector<unsigned char> &g) {
       const uint64_t len = cl::max_cache_payload + 1;
       if (!write_file (p, with_u64 (first (g, cl::cache_header_size), cl::cache_length_offset, len)))
         return false;
       return truncate (p.c_str (), static_cast<off_t> (cl::cache_header_size + len)) == 0;
     },
     true},
    {"directory", [] (const std::string &p, const std::vector<unsigned char> &) { return mkdir (p.c_str (), 0755) == 0; },
     true},
    // not removed (nothing is deleted recursively): built without the cache
    {"directory-not-empty",
     [] (const std::string &p, const std::vector<unsigned char> &g) {
       return mkdir (p.c_str (), 0755) == 0 && write_file (p + "/inside", g);
     },
     false},
    {"fifo", [] (const std::string &p, const std::vector<unsigned char> &) { return mkfifo (p.c_str (), 0644) == 0; },
     true},
    {"symlink-dev-zero",
     [] (const std::string &p, const std::vector<unsigned char> &) { return symlink ("/dev/zero", p.c_str ()) == 0; },
     true},
    // a link is never followed, even to a valid entry
    {"symlink-valid-entry",
     [] (const std::string &p, const std::vector<unsigned char> &g) {
       const std::string target = p + ".target";
       return write_file (target, g) && symlink (target.c_str (), p.c_str ()) == 0;
     },
     true},
};

// --- child modes -------------------------------------------------------------------

int writer_main (const std::string &dir, uint64_t key, int id, int n) {
  alarm (kCaseSeconds);
  for (int i = 0; i < n; i++) {
    // payloads of their own size and content per writer and write
    std::vector<unsigned char> payload (1000 + static_cast<size_t> ((id * 7919 + i * 104729) % 60000));
    for (size_t j = 0; j < payload.size (); j++)
      payload[j] = static_cast<unsigned char> (id * 31 + i + j);
    std::string why;
    if (!cl::write_cache_entry (dir, key, payload.data (), payload.size (), &why)) {
      std::fprintf (stderr, "writer %d: %s\n", id, why.c_str ());
      return 1;
    }
  }
  return 0;
}

int build_main (const std::string &dir) {
  alarm (kCaseSeconds);
  cl::Device dev;
  if (Error e = cl::open_device ("", false, &dev)) {
    std::fprintf (stderr, "no OpenCL device: %s\n", e.message.c_str ());
    return 1;
  }
  const Build b = build (dev, dir);
  return b.ok ? 0 : 1;
}

double seconds_since (std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double> (std::chrono::steady_clock::now () - t).count ();
}

// A read-only folder (mode 0555) holding a valid entry and a damaged one
// (options "-DVARIANT=2"): the valid one is used, the damaged one passed over
// and left, a missing one (-DVARIANT=3) built; one warning about the folder
// in all.  In children forked before this process opens the device (PoCL
// after fork is not safe): one writes the entries, one reads them, as nobody
// where this is root (modes do not stop root; the test runs as root in CI).
void read_only_case (const std::string &base) {
  start_case ("folder-read-only");
  alarm (3 * kCaseSeconds); // two children, each with a watchdog of its own
  const auto t = std::chrono::steady_clock::now ();
  const std::string dir = base + "/read-only", bad_name_file = base + "/read-only-bad";
  mkdir (dir.c_str (), 0755);
  std::fflush (nullptr);
  pid_t pid = fork ();
  if (pid == 0) {
    alarm (kCaseSeconds);
    cl::Device dev;
    if (Error e = cl::open_device ("", false, &dev)) {
      std::fprintf (stderr, "no OpenCL device: %s\n", e.message.c_str ());
      std::exit (1);
    }
    Build b = build (dev, dir), b2 = build (dev, dir, "-DVARIANT=2");
    const std::string bad = dir + "/" + cl::cache_entry_name (key_of (dev, "-DVARIANT=2"));
    std::vector<unsigned char> entry = read_file (bad);
    entry.resize (entry.size () / 2);
    const bool ok = b.ok && b2.ok && write_file (bad, entry) &&
                    write_file (bad_name_file, std::vector<unsigned char> (bad.begin (), bad.end ()));
    std::exit (ok ? 0 : 1);
  }
  CHECK (exited_ok (pid, "read-only folder, writing the entries"));
  const std::vector<unsigned char> bad_name = read_file (bad_name_file);
  const std::string bad (bad_name.begin (), bad_name.end ());
  const std::vector<unsigned char> damaged = read_file (bad);
  CHECK (!damaged.empty ());
  chmod (dir.c_str (), 0555);

  std::string pocl_cache;
  if (geteuid () == 0) {
    // PoCL keeps its compiles in a folder the child must write
    pocl_cache = base + "/pocl-cache";
    mkdir (pocl_cache.c_str (), 0777);
    chmod (pocl_cache.c_str (), 0777);
  }
  std::fflush (nullptr);
  pid = fork ();
  if (pid == 0) {
    alarm (kCaseSeconds);
    if (geteuid () == 0) {
      setenv ("POCL_CACHE_DIR", pocl_cache.c_str (), 1);
      if (setgroups (0, nullptr) != 0 || setgid (65534) != 0 || setuid (65534) != 0) { // nobody, nogroup
        std::fprintf (stderr, "cannot run as nobody: %s\n", std::strerror (errno));
        std::exit (1);
      }
    }
    if (access (dir.c_str (), W_OK) == 0 || access (dir.c_str (), X_OK) != 0) {
      std::fprintf (stderr, "%s is writable or not searchable here\n", dir.c_str ());
      std::exit (1);
    }
    cl::Device dev;
    if (Error e = cl::open_device ("", false, &dev)) {
      std::fprintf (stderr, "no OpenCL device: %s\n", e.message.c_str ());
      std::exit (1);
    }
    Build b = build (dev, dir);
    CHECK (b.ok && b.from_cache);
    CHECK_MSG (g_warnings == 0, "%d warnings", g_warnings);
    b = build (dev, dir, "-DVARIANT=2");
    CHECK (b.ok && !b.from_cache);
    CHECK_MSG (g_warnings == 2, "%d warnings", g_warnings); // the entry, the folder
    g_warnings = 0;
    b = build (dev, dir, "-DVARIANT=3");
    CHECK (b.ok && !b.from_cache);
    CHECK_MSG (g_warnings == 0, "%d warnings", g_warnings); // the folder was said once
    b = build (dev, dir, "-DVARIANT=2");
    CHECK (b.ok && !b.from_cache);
    CHECK_MSG (g_warnings == 1, "%d warnings", g_warnings); // the entry again, not the folder
    std::fflush (nullptr);
    std::exit (g_failed ? 1 : 0);
  }
  CHECK (exited_ok (pid, "read-only folder"));
  CHECK (read_file (bad) == damaged);
  const std::vector<std::string> names = list_dir (dir);
  CHECK_MSG (names.size () == 2, "%zu files in the read-only folder", names.size ());
  std::printf ("%-22s %5.2f s\n", "folder-read-only", seconds_since (t));
}

} // namespace

int main (int argc, char **argv) {
  std::signal (SIGALRM, on_alarm);
  g_self = "/proc/self/exe";
  {
    char buf[4096];
    const ssize_t n = readlink ("/proc/self/exe", buf, sizeof buf - 1);
    if (n > 0)
      g_self.assign (buf, static_cast<size_t> (n));
  }
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "--writer" && argc == 6)
    return writer_main (argv[2], std::strtoull (argv[3], nullptr, 16), std::atoi (argv[4]), std::atoi (argv[5]));
  if (mode == "--build" && argc == 3)
    return build_main (argv[2]);

  cl::set_warning_handler (count_warning);
  const char *tmp = std::getenv ("TMPDIR");
  std::string base = std::string (tmp && *tmp ? tmp : "/tmp") + "/gpudetect-binary-cache-XXXXXX";
  if (!mkdtemp (&base[0])) {
    std::fprintf (stderr, "cannot make a temporary folder: %s\n", std::strerror (errno));
    return 1;
  }
  chmod (base.c_str (), 0755); // the read-only case's child may run as nobody
  const auto t_all = std::chrono::steady_clock::now ();
  read_only_case (base);

  cl::Device dev;
  if (Error e = cl::open_device ("", false, &dev)) {
    std::fprintf (stderr, "no OpenCL device: %s\n", e.message.c_str ()); // a device is required here
    return 1;
  }
  const uint64_t key = key_of (dev);
  const std::string name = cl::cache_entry_name (key);
  int n_case = 0;
  auto fresh_dir = [&] () {
    const std::string d = base + "/case" + std::to_string (n_case++);
    mkdir (d.c_str (), 0755);
    return d;
  };

  // A first build writes the entry; the next comes from it.
  start_case ("first build");
  auto t = std::chrono::steady_clock::now ();
  const std::string dir0 = fresh_dir ();
  Build b = build (dev, dir0);
  CHECK (b.ok && !b.from_cache);
  CHECK (valid_entry (dir0 + "/" + name, key) && only_entry (dir0, name));
  b = build (dev, dir0);
  CHECK (b.ok && b.from_cache);
  CHECK_MSG (g_warnings == 0, "%d warnings", g_warnings);
  const std::vector<unsigned char> good = read_file (dir0 + "/" + name);
  CHECK (good.size () > cl::cache_header_size);
  if (good.size () <= cl::cache_header_size)
    return finish ();
  std::printf ("%-22s %5.2f s\n", "first build", seconds_since (t));

  for (const Damage &d : kDamages) {
    start_case (d.name);
    t = std::chrono::steady_clock::now ();
    const std::string dir = fresh_dir (), path = dir + "/" + name;
    CHECK_MSG (d.apply (path, good), "%s: cannot damage the entry: %s", d.name, std::strerror (errno));
    b = build (dev, dir);
    CHECK_MSG (b.ok && !b.from_cache, "%s: built %d, from the cache %d", d.name, b.ok, b.from_cache);
    CHECK_MSG (g_warnings >= 1, "%s: no warning", d.name);
    if (d.replaced) {
      CHECK_MSG (valid_entry (path, key), "%s: the entry was not replaced by a valid one", d.name);
      b = build (dev, dir);
      CHECK_MSG (b.ok && b.from_cache, "%s: the rebuilt entry is not used", d.name);
      unlink ((path + ".target").c_str ());
      CHECK_MSG (only_entry (dir, name), "%s", d.name);
    }
    remove_tree (dir);
    std::printf ("%-22s %5.2f s\n", d.name, seconds_since (t));
  }

  // A verified entry whose binary the driver refuses: built from source, replaced.
  {
    start_case ("driver-refuses");
    t = std::chrono::steady_clock::now ();
    const std::string dir = fresh_dir (), path = dir + "/" + name;
    const char text[] = "a payload that passes every check but is no program binary";
    std::string why;
    CHECK_MSG (cl::write_cache_entry (dir, key, reinterpret_cast<const unsigned char *> (text), sizeof text, &why),
               "%s", why.c_str ());
    CHECK (valid_entry (path, key));
    b = build (dev, dir);
    CHECK (b.ok && !b.from_cache);
    CHECK_MSG (g_warnings == 1, "%d warnings", g_warnings);
    CHECK (valid_entry (path, key) && read_file (path).size () > cl::cache_header_size + sizeof text);
    b = build (dev, dir);
    CHECK (b.ok && b.from_cache);
    remove_tree (dir);
    std::printf ("%-22s %5.2f s\n", "driver-refuses", seconds_since (t));
  }

  // A folder that cannot be created (under a regular file): built without
  // the cache, one warning for two builds.
  {
    start_case ("folder-not-created");
    t = std::chrono::steady_clock::now ();
    const std::string file = fresh_dir () + "/file";
    CHECK (write_file (file, {'x'}));
    for (int i = 0; i < 2; i++) {
      b = build (dev, file + "/cache");
      CHECK (b.ok && !b.from_cache);
    }
    CHECK_MSG (g_warnings == 1, "%d warnings", g_warnings);
    std::printf ("%-22s %5.2f s\n", "folder-not-created", seconds_since (t));
  }

  // Two processes writing the same entry at once, many times over, while
  // this one reads it: every read finds a whole entry.
  {
    start_case ("two-writers");
    t = std::chrono::steady_clock::now ();
    const std::string dir = fresh_dir (), path = dir + "/" + name;
    char hex[24];
    std::snprintf (hex, sizeof hex, "%llx", static_cast<unsigned long long> (key));
    int start[2] = {-1, -1};
    pid_t w[2];
    for (int i = 0; i < 2; i++)
      w[i] = spawn ({"--writer", dir, hex, std::to_string (i + 1), "300"}, &start[i]);
    close (start[0]);
    close (start[1]);
    int hits = 0, bad = 0, status[2] = {-1, -1};
    for (bool alive = true; alive;) {
      std::vector<unsigned char> payload;
      std::string why;
      switch (cl::read_cache_entry (path, key, &payload, &why)) {
      case cl::CacheRead::Hit: hits++; break;
      case cl::CacheRead::Miss: break;
      case cl::CacheRead::Bad:
        bad++;
        std::fprintf (stderr, "  read while writing: %s\n", why.c_str ());
        break;
      }
      alive = false;
      for (int i = 0; i < 2; i++)
        if (status[i] == -1 && (w[i] < 0 || waitpid (w[i], &status[i], WNOHANG) == 0)) {
          status[i] = -1;
          alive = alive || w[i] > 0;
        }
    }
    for (int i = 0; i < 2; i++)
      CHECK_MSG (w[i] > 0 && WIFEXITED (status[i]) && WEXITSTATUS (status[i]) == 0, "writer %d: status %d", i + 1,
                 status[i]);
    CHECK_MSG (bad == 0, "%d bad reads", bad);
    CHECK (hits > 0);
    CHECK (valid_entry (path, key) && only_entry (dir, name));
    remove_tree (dir);
    std::printf ("%-22s %5.2f s (%d whole reads)\n", "two-writers", seconds_since (t), hits);
  }

  // Two processes building the same program at once into an empty folder.
  {
    start_case ("two-builders");
    t = std::chrono::steady_clock::now ();
    const std::string dir = fresh_dir (), path = dir + "/" + name;
    int start[2] = {-1, -1};
    pid_t w[2];
    for (int i = 0; i < 2; i++)
      w[i] = spawn ({"--build", dir}, &start[i]);
    close (start[0]);
    close (start[1]);
    for (pid_t p : w)
      CHECK (exited_ok (p, "two builders"));
    CHECK (valid_entry (path, key) && only_entry (dir, name));
    b = build (dev, dir);
    CHECK (b.ok && b.from_cache);
    CHECK_MSG (g_warnings == 0, "%d warnings", g_warnings);
    remove_tree (dir);
    std::printf ("%-22s %5.2f s\n", "two-builders", seconds_since (t));
  }

  alarm (0);
  remove_tree (base);
  std::printf ("all cases: %.2f s\n", seconds_since (t_all));
  return finish ();
}
