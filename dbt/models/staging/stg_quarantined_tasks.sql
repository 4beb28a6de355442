select task_id, round, plan_hash, stage, reason
from {{ source('compoworld', 'quarantined_tasks') }}
