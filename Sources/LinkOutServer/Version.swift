/// linkout's version, reported as `linkout_build_info{version=…}` and by `linkout --version`.
package let linkoutVersion = "0.1.0"
