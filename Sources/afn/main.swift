print("afn")
