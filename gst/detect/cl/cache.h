// The on-disk cache of built program binaries that build_program (cl.h)
// reads before it builds from source and writes after.  The folder is
// $GPUDETECT_CACHE_DIR, else $XDG_CACHE_HOME/gpudetect, else
// ~/.cache/gpudetect; one file per (device, driver, source, options, register
// limits), named by a hash of them all.
//
// Nothing in the folder is trusted: an entry reaches the driver only when it
// is a regular file (never followed through a link, never a FIFO or device)
// whose header has the magic, the format version and the key of its name,
// whose size is exactly the header plus the payload length it states (at
// most max_cache_payload), and whose checksum matches.  Entries are written
// to a temporary file of a name no other writer uses, in the same folder,
// then renamed over the entry: readers and concurrent writers see the old
// entry or a whole new one.
//
// Entry layout, integers little-endian (docs/ARCHITECTURE.md, "Program
// binary cache"):
//   0  magic "GDCLBIN\n"      8 bytes
//   8  format version         u32 (cache_format_version)
//   12 reserved, zero         u32
//   16 key                    u64, the hash that names the entry
//   24 payload length         u64
//   32 checksum               u64, FNV-1a 64 over bytes 0-31, then the payload
//   40 payload                the driver's binary
#pragma once

#include "cl.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gpudetect {
namespace cl {

constexpr uint32_t cache_format_version = 1;
constexpr size_t cache_header_size = 40;
constexpr size_t cache_magic_offset = 0, cache_version_offset = 8, cache_key_offset = 16,
                 cache_length_offset = 24, cache_checksum_offset = 32;
// The largest payload read back (the largest program binaries, NVIDIA's
// PTX of the biggest cascades, are a few MiB).
constexpr uint64_t max_cache_payload = uint64_t{256} << 20;

// The cache folder (empty where neither variable nor $HOME is set).
std::string cache_dir ();

// The key of a program on a device: device, driver, options, register limits
// and the source's hash.  Entry file name: cache_entry_name (key).
uint64_t cache_key (const DeviceInfo &info, uint64_t source_hash, const std::string &options,
                    const std::string &ptx_register_limits);
std::string cache_entry_name (uint64_t key);

enum class CacheRead {
  Hit,  // `*payload` holds the verified binary
  Miss, // nothing there (or no folder)
  Bad,  // something there failed verification; `*why` says what
};
// Reads the entry at `path` made for `key`.  Never blocks on what lies there,
// never reads more than the file holds or max_cache_payload.
CacheRead read_cache_entry (const std::string &path, uint64_t key, std::vector<unsigned char> *payload,
                            std::string *why);

// Removes what lies at `path`: a file, a link (not what it points to), a
// FIFO, an empty folder.  False with `*why` where it cannot.
bool remove_cache_entry (const std::string &path, std::string *why);

// Writes `payload` as the entry of `key` at `dir`/cache_entry_name (key),
// creating `dir` where needed.  False with `*why` where the folder cannot be
// created or written (then nothing of ours is left in it).
bool write_cache_entry (const std::string &dir, uint64_t key, const unsigned char *payload, size_t len,
                        std::string *why);

} // namespace cl
} // namespace gpudetect
