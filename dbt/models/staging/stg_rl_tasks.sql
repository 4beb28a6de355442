select task_id, round, domain, n_criteria
from {{ source('compoworld', 'rl_tasks') }}
