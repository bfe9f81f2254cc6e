#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The dates of pin files and failure reports: RFC 3339 in UTC to the second,
/// `2027-06-01T00:00:00Z`, and nothing else (no offset, no fraction, no lowercase `t`/`z`), so
/// that one date has one spelling.
///
/// Done by hand (days from the civil date, Howard Hinnant's algorithm) rather than with a
/// formatter: it needs nothing beyond `Date`, and it is exact for every year from 1 to 9999.
enum PinDate {
    /// 0001-01-01T00:00:00Z, in seconds since 1970.
    static let earliest: Int64 = -62_135_596_800
    /// 9999-12-31T23:59:59Z, in seconds since 1970.
    static let latest: Int64 = 253_402_300_799

    /// Whether `date` lies in the years 1 to 9999 that the format can write.
    static func isRepresentable(_ date: Date) -> Bool {
        let seconds = date.timeIntervalSince1970
        return seconds.isFinite && seconds >= Double(earliest) && seconds < Double(latest) + 1
    }

    /// `date` with its fraction of a second dropped: what a pin file can hold.
    static func wholeSeconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
    }

    /// Writes `date`, dropping fractions of a second; dates outside the years 1 to 9999 are
    /// written as the nearest end of that range.
    static func format(_ date: Date) -> String {
        let interval = date.timeIntervalSince1970
        let seconds: Int64
        if interval.isNaN {
            seconds = latest
        } else {
            seconds = Int64(min(max(interval.rounded(.down), Double(earliest)), Double(latest)))
        }
        let dayNumber = floorDivide(seconds, 86_400)
        let secondOfDay = seconds - dayNumber * 86_400
        let (year, month, day) = civil(fromDays: dayNumber)
        return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T" + pad(secondOfDay / 3600, 2) + ":"
            + pad(secondOfDay % 3600 / 60, 2) + ":" + pad(secondOfDay % 60, 2) + "Z"
    }

    /// Reads exactly the form ``format(_:)`` writes; nil for anything else, including dates
    /// that do not exist (February 30, a 60th second).
    static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count == 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
            bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"), bytes[19] == UInt8(ascii: "Z")
        else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for byte in bytes[range] {
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int64(byte - 0x30)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
            let minute = number(14..<16), let second = number(17..<19)
        else { return nil }
        guard year >= 1, (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month), hour < 24, minute < 60,
            second < 60
        else { return nil }
        let dayNumber = days(fromYear: year, month: month, day: day)
        return Date(timeIntervalSince1970: Double(dayNumber * 86_400 + hour * 3600 + minute * 60 + second))
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    private static func floorDivide(_ dividend: Int64, _ divisor: Int64) -> Int64 {
        let quotient = dividend / divisor
        return dividend % divisor < 0 ? quotient - 1 : quotient
    }

    private static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a date in the proleptic Gregorian calendar.
    private static func days(fromYear year: Int64, month: Int64, day: Int64) -> Int64 {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = floorDivide(shiftedYear, 400)
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The proleptic Gregorian date `days` days after 1970-01-01.
    private static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = floorDivide(shifted, 146_097)
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
