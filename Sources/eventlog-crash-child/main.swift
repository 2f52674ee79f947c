print("crash child")
