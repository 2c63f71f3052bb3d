import CallAPI
import CallAPIMQTT
import CallAPIMatrix
import Testing

/// The code CallAPI reports for a send the adapter could not make (`onCallError(.sendMessageFail, .message, code,
/// message)`) is the error's fixed number, and its message the error's sentence: what CallAPI's `SendFailure`
/// reads from any error is what an app sees.
@Suite struct AdapterErrorCodeTests {
    @Test func mqttErrorsKeepTheirNumbers() {
        #expect(
            SendFailure(MQTTClientError.notConnected)
                == SendFailure(code: 5, message: "\(MQTTClientError.notConnected)"))
        #expect(SendFailure(MQTTClientError.badURL("x")).code == 8)
        #expect(SendFailure(MQTTClientError.refused(returnCode: 5)).code == 1)
    }

    @Test func matrixErrorsGiveTheirHTTPStatusOrTheirNumber() {
        #expect(SendFailure(MatrixClientError.http(status: 429, body: "{}")).code == 429)
        #expect(
            SendFailure(MatrixClientError.notLoggedIn)
                == SendFailure(code: 1, message: "\(MatrixClientError.notLoggedIn)"))
        #expect(SendFailure(MatrixClientError.tooManyQueuedSends(8)).code == 3)
    }
}
