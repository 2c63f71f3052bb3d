import Logging

/// A logger that keeps test output clean.
let quietLogger: Logger = {
    var logger = Logger(label: "test")
    logger.logLevel = .critical
    return logger
}()
