import Foundation
import PackagePlugin

/// Embeds the files of the package's `Web` folder (the JavaScript client, the `/phone` page) in the target it is
/// applied to (`callapi-embed-web`), rebuilt when any of them changes.
@main
struct EmbedWebFiles: BuildToolPlugin {
    /// The kinds of file the server serves (`WebFiles.contentType(of:)` names each).
    static let servedExtensions: Set<String> = ["html", "js", "mjs", "css", "json", "png", "svg"]

    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let web = context.package.directoryURL.appending(path: "Web")
        var files: [URL] = []
        if let walk = FileManager.default.enumerator(at: web, includingPropertiesForKeys: [.isRegularFileKey]) {
            // Only what a browser loads: a stray file (a development server's ledger, an editor's backup) stays out.
            for case let url as URL in walk
            where (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true
                && Self.servedExtensions.contains(url.pathExtension)
            {
                files.append(url)
            }
        }
        let output = context.pluginWorkDirectoryURL.appending(path: "WebFiles+Embedded.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(files.count) web files in \(target.name)",
                executable: try context.tool(named: "callapi-embed-web").url,
                arguments: [output.path, web.path] + files.map(\.path),
                inputFiles: files, outputFiles: [output])
        ]
    }
}
