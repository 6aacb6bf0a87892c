"""The client subject: a tasks client under test, judged from the bytes it sends to a scripted
server. It stands on core/ as the server subject does, beside it and never importing it."""
