/// The version `signet --version` prints.
enum SignetVersion {
    static let string = "0.7.0"
}
