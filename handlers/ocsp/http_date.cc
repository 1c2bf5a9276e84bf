#include "handlers/ocsp/http_date.h"

#include <algorithm>

#include "absl/time/civil_time.h"

namespace onepass::ocsp {
namespace {

void Put2(char* p, int value) {
  p[0] = static_cast<char>('0' + value / 10);
  p[1] = static_cast<char>('0' + value % 10);
}

}  // namespace

void FormatHttpDate(absl::Time time, HttpDateBuffer& out) {
  // Indexed by absl::Weekday (monday = 0) and by month - 1.
  static constexpr char kWeekdays[][4] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
  static constexpr char kMonths[][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
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

std::string HttpDate(absl::Time time) {
  HttpDateBuffer buffer;
  FormatHttpDate(time, buffer);
  return std::string(buffer.data(), buffer.size());
}

}  // namespace onepass::ocsp
