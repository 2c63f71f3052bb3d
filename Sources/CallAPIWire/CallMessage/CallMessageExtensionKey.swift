/// The keys of a call message's user extension (`fromUserExtension`) that the call system itself reads.
package enum CallMessageExtensionKey {
    /// The caller's name as a call screen or a push shows it.
    package static let callerName: StaticString = "displayName"
}
