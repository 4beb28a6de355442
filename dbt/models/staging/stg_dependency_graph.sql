select source, target, source_service, target_service, kind, type, parameter, output_path, cross_service
from {{ source('compoworld', 'dependency_graph') }}
