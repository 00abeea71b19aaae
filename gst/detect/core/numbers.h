// Numbers and quoted excerpts in the text of model files and tuning strings,
// read and written the same way by every parser and writer: strict (the whole
// token, finite, in range, no overflow) and whatever the process's locale (an
// application may have set one whose decimal point is a comma).
#pragma once

#include <cstdint>
#include <string>

namespace gpudetect {

// A decimal number ("+" allowed in front); finite.
bool to_double (const std::string &t, double *v);
// A decimal number that stays finite when rounded to float, as the device
// takes it (a double such as 1e39 is not).
bool to_float (const std::string &t, float *v);
// A decimal integer ("+" allowed in front), within the range of long long.
bool to_long (const std::string &t, long long *v);
// A decimal integer in [lo, hi].
bool to_int (const std::string &t, long long lo, long long hi, int *v);

// The shortest text that to_double reads back to exactly `v` (finite; an
// infinity is "inf" or "-inf", which a reader takes where it allows one).
std::string number_text (double v);
// The shortest text that to_double, rounded to float, reads back to exactly
// `v` (the parsers read a float field as a double, as OpenCV does).
std::string float_text (float v);
// An OpenCL C literal of exactly `v` (finite): "(0x1.8p+0f)".
std::string float_literal (float v);

// A double as int64_t: toward zero, NaN as 0, clamped to the type's range
// (the families' fixed-point sums).
int64_t saturate_int64 (double v);

// A value shown in a message: at most 64 bytes of it (cut at a UTF-8
// character boundary), "..." where it was cut.
std::string excerpt (const std::string &s);
// The same in single quotes.
std::string quoted (const std::string &s);

} // namespace gpudetect
