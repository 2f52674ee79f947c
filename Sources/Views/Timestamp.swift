import Domain

/// RFC 3339 UTC with milliseconds ("2026-11-21T18:02:11.345Z"), computed without
/// a calendar library so that views stay pure and fast.
public func formatTimestamp(_ millis: Millis) -> String {
    let msPerDay: Int64 = 86_400_000
    var days = millis / msPerDay
    var rest = millis % msPerDay
    if rest < 0 { rest += msPerDay; days -= 1 }
    let (year, month, day) = civilDate(daysSinceEpoch: days)
    let hour = rest / 3_600_000
    let minute = rest / 60_000 % 60
    let second = rest / 1000 % 60
    let milli = rest % 1000
    return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2)).\(pad(milli, 3))Z"
}

private func pad(_ value: Int64, _ width: Int) -> String {
    let digits = String(value)
    return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's civil_from_days idea).
private func civilDate(daysSinceEpoch: Int64) -> (Int64, Int64, Int64) {
    let z = daysSinceEpoch + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let mp = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * mp + 2) / 5 + 1
    let month = mp < 10 ? mp + 3 : mp - 9
    return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
}
