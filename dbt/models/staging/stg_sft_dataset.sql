select trajectory_id, task_id, round, domain
from {{ source('compoworld', 'sft_dataset') }}
