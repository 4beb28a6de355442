"""Service specifications: the pydantic model and importers for real spec formats."""
