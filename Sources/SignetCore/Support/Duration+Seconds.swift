extension Duration {
    /// The whole seconds of this duration, a fraction dropped: for formats and clocks that count
    /// in seconds (signature parameters, stored timestamps).
    package var wholeSeconds: Int64 { components.seconds }
}
