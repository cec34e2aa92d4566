print("anonauth")
