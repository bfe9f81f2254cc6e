extension Duration {
    /// The whole seconds of this duration, a fraction dropped: for formats and clocks that count
    /// in seconds (signature parameters, stored timestamps). Saturates at ±2⁶¹ seconds, so that
    /// adding it to a timestamp never overflows, however large a configured interval.
    package var wholeSeconds: Int64 {
        let limit = Int64.max / 4
        if self >= .seconds(limit) { return limit }
        if self <= .seconds(-limit) { return -limit }
        return components.seconds
    }
}
