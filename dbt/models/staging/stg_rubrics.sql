select criterion_key, task_id, round, criterion_id, kind, weight
from {{ source('compoworld', 'rubrics') }}
