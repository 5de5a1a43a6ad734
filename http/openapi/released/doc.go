// Package released holds the API's OpenAPI document as last released
// (openapi-<major>.json, the newest major the baseline) and the test that
// holds the served document to it: nothing an integrator's generated
// client relies on may break (a removed or renamed path, parameter,
// property or enum value, a narrowed type, a new required request field)
// unless info.version moves to a new major and CHANGELOG.md says so.
//
// It is a module of its own so that the breaking-change checker (oasdiff)
// and the kin-openapi it needs ride in none of the service's builds and
// do not move the clients module's generator. `make openapi-baseline`
// releases the served document as the new baseline (docs/clients.md).
package released
