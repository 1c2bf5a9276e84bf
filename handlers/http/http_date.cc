#include "handlers/http/http_date.h"

#include <algorithm>

#include "absl/time/civil_time.h"

namespace onepass::http {
namespace {

constexpr char kWeekdays[][4] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
constexpr char kMonths[][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                               "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

// Two or four decimal digits at `p`; -1 if any is not a digit.
int Digits(absl::string_view text, size_t at, size_t count) {
  int value = 0;
  for (size_t i = at; i < at + count; ++i) {
    if (text[i] < '0' || text[i] > '9') return -1;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

// The index of the 3-letter name at `at` in `names`, or -1.
template <size_t N>
int NameIndex(absl::string_view text, size_t at, const char (&names)[N][4]) {
  for (size_t i = 0; i < N; ++i) {
    if (text.substr(at, 3) == absl::string_view(names[i], 3)) return static_cast<int>(i);
  }
  return -1;
}

void Put2(char* p, int value) {
  p[0] = static_cast<char>('0' + value / 10);
  p[1] = static_cast<char>('0' + value % 10);
}

}  // namespace

void FormatHttpDate(absl::Time time, HttpDateBuffer& out) {
  // kWeekdays is indexed by absl::Weekday (monday = 0), kMonths by month - 1.
  const absl::TimeZone utc = absl::UTCTimeZone();
  absl::CivilSecond civil = absl::ToCivilSecond(time, utc);
  if (civil.year() < 0) civil = absl::CivilSecond(0, 1, 1, 0, 0, 0);
  if (civil.year() > 9999) civil = absl::CivilSecond(9999, 12, 31, 23, 59, 59);
  const int weekday = static_cast<int>(absl::GetWeekday(absl::CivilDay(civil)));
  const int year = static_cast<int>(civil.year());
  char* p = out.data();
  std::copy_n(kWeekdays[weekday], 3, p);
  p[3] = ',';
  p[4] = ' ';
  Put2(p + 5, civil.day());
  p[7] = ' ';
  std::copy_n(kMonths[civil.month() - 1], 3, p + 8);
  p[11] = ' ';
  Put2(p + 12, year / 100);
  Put2(p + 14, year % 100);
  p[16] = ' ';
  Put2(p + 17, civil.hour());
  p[19] = ':';
  Put2(p + 20, civil.minute());
  p[22] = ':';
  Put2(p + 23, civil.second());
  std::copy_n(" GMT", 4, p + 25);
}

absl::optional<absl::Time> ParseHttpDate(absl::string_view text) {
  // "Sun, 06 Nov 1994 08:49:37 GMT": fixed positions.
  if (text.size() != kHttpDateBytes || text.substr(3, 2) != ", " || text[7] != ' ' ||
      text[11] != ' ' || text[16] != ' ' || text[19] != ':' || text[22] != ':' ||
      text.substr(25) != " GMT") {
    return absl::nullopt;
  }
  const int weekday = NameIndex(text, 0, kWeekdays);
  const int month = NameIndex(text, 8, kMonths);
  const int day = Digits(text, 5, 2);
  const int year = Digits(text, 12, 4);
  const int hour = Digits(text, 17, 2);
  const int minute = Digits(text, 20, 2);
  const int second = Digits(text, 23, 2);
  if (weekday < 0 || month < 0 || day < 1 || year < 0 || hour < 0 || hour > 23 || minute < 0 ||
      minute > 59 || second < 0 || second > 60) {
    return absl::nullopt;
  }
  // A leap second (60) is read as the second after 59.
  const absl::CivilSecond civil(year, month + 1, day, hour, minute, std::min(second, 59));
  // CivilSecond normalizes Feb 30 to Mar 2: such a date is not valid (nor is a wrong weekday).
  if (civil.day() != day || civil.month() != month + 1 ||
      static_cast<int>(absl::GetWeekday(absl::CivilDay(civil))) != weekday) {
    return absl::nullopt;
  }
  return absl::FromCivil(civil, absl::UTCTimeZone()) + absl::Seconds(second == 60 ? 1 : 0);
}

std::string HttpDate(absl::Time time) {
  HttpDateBuffer buffer;
  FormatHttpDate(time, buffer);
  return std::string(buffer.data(), buffer.size());
}

}  // namespace onepass::http
