// swift-tools-version:5.9
// The Swift package of taxi-fiscal's mobile library, as scripts/ios lays it out (OUT/TaxiFiscal/):
// this file, Sources/TaxiFiscal/ (the generated bindings and the async wrapper) and the
// static library TaxiFiscalFFI.xcframework. An app adds the directory as a local package and
// links the product `TaxiFiscal`; `import TaxiFiscal` gives `FieldSession`, `FieldClient` and
// the rest.

import PackageDescription

let package = Package(
    name: "TaxiFiscal",
    platforms: [.iOS(.v15)],
    products: [
        .library(name: "TaxiFiscal", targets: ["TaxiFiscal"]),
    ],
    targets: [
        // The Rust library for devices and the simulator. Each slice carries the C module
        // `taxi_fiscalFFI` (Headers/taxi_fiscalFFI/module.modulemap and its header): the
        // generated Swift imports that module by name, not this target's.
        .binaryTarget(name: "TaxiFiscalFFI", path: "TaxiFiscalFFI.xcframework"),
        .target(
            name: "TaxiFiscal",
            dependencies: ["TaxiFiscalFFI"],
            path: "Sources/TaxiFiscal",
            // A static library does not bring the system frameworks it calls: the HTTP client
            // (reqwest) links Security and CoreFoundation on Apple platforms.
            linkerSettings: [
                .linkedFramework("Security"),
                .linkedFramework("CoreFoundation"),
            ]
        ),
    ]
)
