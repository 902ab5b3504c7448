# Stop and go on (slurm/requeue.bash, placed here by `lapa slurm render`). Slurm sends SIGUSR1 to srun's tasks
# slurm.signal_lead_s ({{lead}} s; 0: none) before the time limit (#SBATCH --signal without B:, so that it reaches the
# trainer itself, inside its container too, and not this script). A lapa trainer then stops at its next step boundary,
# writes a checkpoint and exits {{exit_requeue}}; this script, on the host, requeues the job (same id, script, overrides
# and run folder; the log goes on in the same file) or, where Slurm refuses, submits itself again, and exits 0. Any
# other exit code is passed on. Preemption's SIGTERM (within GraceTime) reaches the tasks alone and goes the same way.
LAPA_ARGS=("$@")
trap 'echo "lapa: SIGTERM reached the batch script (time limit, scancel, preemption or requeue)" >&2' TERM

lapa_resubmit() (   # a subshell: this job's SLURM_* variables stay out of the next job, which gets its own
    local task=(${SLURM_ARRAY_TASK_ID:+"--array=$SLURM_ARRAY_TASK_ID"})   # an array's task: that task alone again
    for v in $(compgen -e); do
        case $v in SLURM_CONF) ;; SLURM_*) unset "$v" ;; esac
    done
    export LAPA_RESUBMITS=$1
    sbatch --parsable "${task[@]}" "$0" "${LAPA_ARGS[@]}"
)

run_or_requeue() {   # run_or_requeue srun ...: exits with its code; on {{exit_requeue}}, requeues (or resubmits), exits 0
    local rc=0 runs next
    "$@" || rc=$?
    [ "$rc" -eq {{exit_requeue}} ] || exit "$rc"
    runs=$(( ${SLURM_RESTART_COUNT:-0} + ${LAPA_RESUBMITS:-0} + 1 ))
    if [ "{{requeue}}" = false ] || [ "$runs" -gt {{max_requeues}} ]; then
        echo "lapa: stopped with a checkpoint (exit $rc) in run $runs; not requeued (slurm.requeue={{requeue}}," \
             "slurm.max_requeues={{max_requeues}}): sbatch this script again to go on" >&2
        exit "$rc"
    fi
    echo "lapa: job $SLURM_JOB_ID stopped with a checkpoint (exit $rc) in run $runs: requeueing it"
    if scontrol requeue "$SLURM_JOB_ID"; then exit 0; fi
    echo "lapa: scontrol requeue refused: submitting this script again" >&2
    if next=$(lapa_resubmit "$runs"); then
        echo "lapa: the run goes on as job ${next%%;*}"
        exit 0
    fi
    echo "lapa: the resubmission failed too: sbatch this script again to go on" >&2
    exit "$rc"
}
