#include "cache.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <new>
#include <sys/stat.h>
#include <unistd.h>

namespace gpudetect {
namespace cl {

namespace {

const char magic[8] = {'G', 'D', 'C', 'L', 'B', 'I', 'N', '\n'};

void put_le (unsigned char *p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++)
    p[i] = static_cast<unsigned char> (v >> (8 * i));
}

uint64_t get_le (const unsigned char *p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++)
    v |= static_cast<uint64_t> (p[i]) << (8 * i);
  return v;
}

std::string errno_text (int err) { return std::strerror (err); }

// What a file that is not a regular one is, for the warning.
std::string not_regular (mode_t mode) {
  const char *kind = S_ISDIR (mode)                     ? "a directory"
                     : S_ISLNK (mode)                   ? "a symbolic link"
                     : S_ISFIFO (mode)                  ? "a FIFO"
                     : S_ISCHR (mode) || S_ISBLK (mode) ? "a device"
                     : S_ISSOCK (mode)                  ? "a socket"
                                                        : "something";
  return std::string (kind) + ", not a regular file";
}

class Fd {
public:
  explicit Fd (int fd) : fd_ (fd) {}
  Fd (const Fd &) = delete;
  Fd &operator= (const Fd &) = delete;
  ~Fd () {
    if (fd_ >= 0)
      ::close (fd_);
  }
  int get () const { return fd_; }
  // Closes now, reporting close's own failure (a write the file system
  // refused late).
  bool close () {
    const int fd = fd_;
    fd_ = -1;
    return ::close (fd) == 0;
  }

private:
  int fd_;
};

// Up to `len` bytes; fewer only at the end of the file or on an error.
size_t read_full (int fd, unsigned char *p, size_t len) {
  size_t done = 0;
  while (done < len) {
    const ssize_t n = ::read (fd, p + done, len - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    done += static_cast<size_t> (n);
  }
  return done;
}

bool write_full (int fd, const unsigned char *p, size_t len) {
  while (len > 0) {
    const ssize_t n = ::write (fd, p, len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    p += n;
    len -= static_cast<size_t> (n);
  }
  return true;
}

// Every missing folder of `path`; errors show when the entry is written.
void make_dirs (const std::string &path) {
  for (size_t i = 1; i <= path.size (); i++)
    if (i == path.size () || path[i] == '/')
      ::mkdir (path.substr (0, i).c_str (), 0755);
}

// Bytes 0-31 of an entry's header; the checksum covers them and the payload.
void fill_header (unsigned char *h, uint64_t key, uint64_t len) {
  std::memcpy (h + cache_magic_offset, magic, sizeof magic);
  put_le (h + cache_version_offset, cache_format_version, 4);
  put_le (h + cache_version_offset + 4, 0, 4);
  put_le (h + cache_key_offset, key, 8);
  put_le (h + cache_length_offset, len, 8);
}

// A name for a temporary file that no other writer (thread, process, or
// process of another PID namespace sharing the folder) picks at the same time.
std::string temporary_name (const std::string &entry) {
  static std::atomic<uint64_t> counter{0};
  struct timespec ts = {};
  clock_gettime (CLOCK_REALTIME, &ts);
  char buf[96];
  std::snprintf (buf, sizeof buf, ".tmp-%ld-%llu-%lx%09lx", static_cast<long> (getpid ()),
                 static_cast<unsigned long long> (counter.fetch_add (1)), static_cast<unsigned long> (ts.tv_sec),
                 static_cast<unsigned long> (ts.tv_nsec));
  return "." + entry + buf;
}

} // namespace

std::string cache_dir () {
  if (const char *d = std::getenv ("GPUDETECT_CACHE_DIR"))
    return d;
  if (const char *x = std::getenv ("XDG_CACHE_HOME"); x && *x)
    return std::string (x) + "/gpudetect";
  if (const char *h = std::getenv ("HOME"); h && *h)
    return std::string (h) + "/.cache/gpudetect";
  return {};
}

uint64_t cache_key (const DeviceInfo &info, uint64_t source_hash, const std::string &options,
                    const std::string &ptx_register_limits) {
  const std::string key = info.platform_name + "|" + info.name + "|" + info.driver_version + "|" +
                          info.device_version + "|" + options + "|" + ptx_register_limits;
  return fnv1a (key.data (), key.size (), source_hash);
}

std::string cache_entry_name (uint64_t key) {
  char name[40];
  std::snprintf (name, sizeof name, "%016llx.bin", static_cast<unsigned long long> (key));
  return name;
}

CacheRead read_cache_entry (const std::string &path, uint64_t key, std::vector<unsigned char> *payload,
                            std::string *why) {
  payload->clear ();
  // Only a regular file is opened (a device or FIFO never is), never through
  // a link; fstat checks again what was opened, O_NONBLOCK keeps a FIFO put
  // there in between from blocking the open.
  struct stat st = {};
  if (::lstat (path.c_str (), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR)
      return CacheRead::Miss;
    *why = "cannot be examined: " + errno_text (errno);
    return CacheRead::Bad;
  }
  if (!S_ISREG (st.st_mode)) {
    *why = not_regular (st.st_mode);
    return CacheRead::Bad;
  }
  Fd fd (::open (path.c_str (), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get () < 0) {
    if (errno == ENOENT)
      return CacheRead::Miss;
    *why = errno == ELOOP ? not_regular (S_IFLNK) : "cannot be opened: " + errno_text (errno);
    return CacheRead::Bad;
  }
  if (::fstat (fd.get (), &st) != 0 || !S_ISREG (st.st_mode)) {
    *why = not_regular (st.st_mode);
    return CacheRead::Bad;
  }
  const uint64_t size = static_cast<uint64_t> (st.st_size);
  unsigned char h[cache_header_size];
  if (size < cache_header_size || read_full (fd.get (), h, sizeof h) != sizeof h) {
    *why = std::to_string (size) + " bytes, shorter than the header";
    return CacheRead::Bad;
  }
  if (std::memcmp (h + cache_magic_offset, magic, sizeof magic) != 0) {
    *why = "no magic";
    return CacheRead::Bad;
  }
  const uint64_t version = get_le (h + cache_version_offset, 4);
  if (version != cache_format_version) {
    *why = "format version " + std::to_string (version) + ", not " + std::to_string (cache_format_version);
    return CacheRead::Bad;
  }
  if (get_le (h + cache_version_offset + 4, 4) != 0) {
    *why = "reserved header bytes not zero";
    return CacheRead::Bad;
  }
  if (get_le (h + cache_key_offset, 8) != key) {
    *why = "made for another key";
    return CacheRead::Bad;
  }
  const uint64_t len = get_le (h + cache_length_offset, 8);
  if (len == 0 || len > max_cache_payload || len != size - cache_header_size) {
    *why = "payload length " + std::to_string (len) + " in a file of " + std::to_string (size) + " bytes";
    return CacheRead::Bad;
  }
  try {
    payload->resize (len);
  } catch (const std::bad_alloc &) {
    *why = "payload length " + std::to_string (len) + ", more than the memory free";
    return CacheRead::Bad;
  }
  if (read_full (fd.get (), payload->data (), len) != len) {
    payload->clear ();
    *why = "shorter than its payload length";
    return CacheRead::Bad;
  }
  const uint64_t sum = fnv1a (payload->data (), len, fnv1a (h, cache_checksum_offset));
  if (sum != get_le (h + cache_checksum_offset, 8)) {
    payload->clear ();
    *why = "checksum mismatch";
    return CacheRead::Bad;
  }
  return CacheRead::Hit;
}

bool remove_cache_entry (const std::string &path, std::string *why) {
  struct stat st = {};
  if (::lstat (path.c_str (), &st) != 0) {
    if (errno == ENOENT)
      return true;
    *why = errno_text (errno);
    return false;
  }
  if ((S_ISDIR (st.st_mode) ? ::rmdir (path.c_str ()) : ::unlink (path.c_str ())) == 0 || errno == ENOENT)
    return true;
  *why = errno_text (errno);
  return false;
}

bool write_cache_entry (const std::string &dir, uint64_t key, const unsigned char *payload, size_t len,
                        std::string *why) {
  if (len == 0 || len > max_cache_payload) {
    *why = "a binary of " + std::to_string (len) + " bytes is not kept";
    return false;
  }
  make_dirs (dir);
  const std::string name = cache_entry_name (key);
  unsigned char h[cache_header_size];
  fill_header (h, key, len);
  put_le (h + cache_checksum_offset, fnv1a (payload, len, fnv1a (h, cache_checksum_offset)), 8);

  // A temporary file in the same folder, renamed over the entry once whole.
  // No fsync: an entry torn by a crash fails its checksum and is rebuilt.
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 8 && fd < 0; attempt++) {
    tmp = dir + "/" + temporary_name (name);
    fd = ::open (tmp.c_str (), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && errno != EEXIST)
      break;
  }
  if (fd < 0) {
    *why = "cannot create a file in " + dir + ": " + errno_text (errno);
    return false;
  }
  Fd file (fd);
  bool ok = write_full (fd, h, sizeof h) && write_full (fd, payload, len);
  int err = errno;
  if (!file.close () && ok) {
    ok = false;
    err = errno;
  }
  if (ok && ::rename (tmp.c_str (), (dir + "/" + name).c_str ()) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    ::unlink (tmp.c_str ());
    *why = "cannot write " + dir + "/" + name + ": " + errno_text (err);
  }
  return ok;
}

} // namespace cl
} // namespace gpudetect
