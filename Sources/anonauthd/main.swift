print("anonauthd")
