// Temporary: keeps the target non-empty until its sources land.
