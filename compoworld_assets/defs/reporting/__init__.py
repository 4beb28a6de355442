"""Stage: reporting marts built by dbt over the pipeline tables."""
