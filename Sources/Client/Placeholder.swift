// The client library: see Client.swift (coming with issue 5).
