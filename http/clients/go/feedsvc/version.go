package feedsvc

// Version is the version of the API document (its info.version) this
// client was generated from: the client and the TypeScript package
// (@feedsvc/client, http/clients/ts/package) move with it, and a test
// fails when the served document's version is another.
const Version = "1"
