// Numbers and quoted excerpts in the text of model files and tuning strings,
// read the same way by every parser: strict (the whole token, finite, in
// range, no overflow) and whatever the process's locale (an application may
// have set one whose decimal point is a comma).
#pragma once

#include <string>

namespace gpudetect {

// A decimal number ("+" allowed in front); finite.
bool to_double (const std::string &t, double *v);
// A decimal integer ("+" allowed in front), within the range of long long.
bool to_long (const std::string &t, long long *v);
// A decimal integer in [lo, hi].
bool to_int (const std::string &t, long long lo, long long hi, int *v);

// A value shown in a message: at most 64 bytes of it (cut at a UTF-8
// character boundary), "..." where it was cut.
std::string excerpt (const std::string &s);
// The same in single quotes.
std::string quoted (const std::string &s);

} // namespace gpudetect
