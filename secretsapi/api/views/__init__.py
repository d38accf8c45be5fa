"""One APIView per endpoint, grouped by resource."""
