extension ConfigLoader {
    /// `paymentProviders` (absent: no webhook is taken): `stripe` and `paddle`, each a path on the shoppers'
    /// listener and its signing secrets, from a file (`signingSecretsFile`, preferred) or the config.
    static func readPaymentProviders(
        _ root: inout ObjectReader, baseDirectory: String, takenPaths: [String], reportingConfigured: Bool, problems: inout [ConfigProblem]
    ) -> PaymentProvidersSettings {
        var result = PaymentProvidersSettings()
        guard var section = root.object("paymentProviders", problems: &problems) else { return result }
        var paths = takenPaths
        for provider in PaymentProvider.allCases {
            guard var object = section.object(provider.rawValue, problems: &problems) else { continue }
            let path = object.string("path", required: true, problems: &problems)
            var settings = PaymentProviderSettings(provider: provider, path: path ?? "/")
            if let path {
                if !isNotificationPath(path) {
                    problems.append(
                        object.problem(
                            "path",
                            "must be a path such as /webhooks/\(provider.rawValue): '/' then letters, digits, '-', '_', '.' and '/', no query"
                        ))
                } else if paths.contains(path) || LinkPathRules.reserved.contains(path) {
                    problems.append(
                        object.problem(
                            "path",
                            "must not be a link's path, the notifications path, another provider's, or one the gateway answers itself (/healthz, /readyz, /favicon.ico, /robots.txt)"
                        ))
                }
                paths.append(path)
            }
            let file = object.string("signingSecretsFile", problems: &problems)
            let inline = object.array("signingSecrets", problems: &problems)
            switch (file, inline) {
            case (nil, nil):
                problems.append(
                    object.problem("signingSecretsFile", "is required (or signingSecrets): the endpoint's signing secrets, one a line"))
            case (.some, .some):
                problems.append(object.problem("signingSecrets", "must not come with signingSecretsFile: name one place for the secrets"))
            case (let file?, nil):
                if file.isEmpty {
                    problems.append(object.problem("signingSecretsFile", "must be a file path"))
                } else {
                    settings.secretsFile = resolve(file, against: baseDirectory)
                }
            case (nil, let list?):
                var secrets: [String] = []
                for element in list {
                    guard case .string(let text) = element else {
                        problems.append(object.problem("signingSecrets", "must be a list of strings"))
                        continue
                    }
                    secrets.append(text)
                }
                if let problem = settings.secretsProblem(secrets) { problems.append(object.problem("signingSecrets", problem)) }
                settings.secrets = secrets
            }
            if let seconds = object.integer("toleranceSeconds", in: 1...86_400, "must be from 1 to 86400", problems: &problems) {
                settings.toleranceSeconds = seconds
            }
            if let product = object.string("defaultProductIdentifier", problems: &problems) {
                if (1...256).contains(product.count) {
                    settings.defaultProductIdentifier = product
                } else {
                    problems.append(object.problem("defaultProductIdentifier", "must be 1 to 256 characters, as Apple's productIdentifier"))
                }
            }
            if let size = object.integer("maxBodyBytes", in: 1024...4_194_304, "must be from 1024 to 4194304", problems: &problems) {
                settings.maxBodyBytes = Int(size)
            }
            if provider == .paddle {
                switch object.string("environment", required: true, problems: &problems) {
                case "production"?: settings.environment = .production
                case "sandbox"?: settings.environment = .sandbox
                case nil: break
                case let other?:
                    problems.append(
                        object.problem(
                            "environment",
                            "must be production or sandbox (whose account the secrets are from), not \(JSONText.quote(other))"))
                }
            }
            if !reportingConfigured {
                problems.append(
                    object.problem("path", "payment providers need the reporting section: their events become line items reported to Apple")
                )
            }
            object.reportUnknownKeys(problems: &problems)
            result.providers.append(settings)
        }
        section.reportUnknownKeys(problems: &problems)
        return result
    }
}
