import Foundation
import PackagePlugin

/// Embeds the files of a target's `Web` folder in the target (`callapi-embed-web`), rebuilt when any of them changes.
@main
struct EmbedWebFiles: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let web = target.directoryURL.appending(path: "Web")
        var files: [URL] = []
        if let walk = FileManager.default.enumerator(at: web, includingPropertiesForKeys: [.isRegularFileKey]) {
            for case let url as URL in walk
            where (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
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
