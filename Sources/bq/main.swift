print("bq")
