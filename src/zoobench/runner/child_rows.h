// The rows of one model's child process: the file the child writes them to as each experiment
// finishes (atomically, so the parent never reads half a file), and the rows the parent adds
// for what the child did not report, from how it ended (timeout, crash, exit without rows).
#pragma once

#include <string>
#include <vector>

#include "zoobench/results/rows.h"
#include "zoobench/runner/child_process.h"
#include "zoobench/runner/job_plan.h"
#include "zoobench/runner/record_rows.h"
#include "zoobench/runner/zoo_supply.h"

namespace zoobench {

// Why a child gave no result, for a row or a message: its timeout, the signal (with the child's
// own crash line when its log has one), its exit status and last log line, or why it did not
// start.
std::string child_failure_reason(const ChildOutcome& outcome, const std::string& log,
                                 double timeout_s);

void write_rows_file(const std::string& path, const std::vector<ResultRow>& rows);
// The rows in `path`; none when it does not exist or cannot be parsed.
std::vector<ResultRow> read_rows_file(const std::string& path);

// `rows` (what the child reported) plus a row for every requested experiment (and input layout)
// it did not report, with the status its end implies: timeout, crash (with the phase from its
// crash report), or infra_error with the log's last line. An interrupted child's finished rows
// only: --resume runs the rest.
std::vector<ResultRow> complete_rows(const JobPlan& job, const std::string& device,
                                     const std::string& log, std::vector<ResultRow> rows,
                                     const ChildOutcome& outcome);

// For a job that checks and then times its model in one process (JobPlan::accuracy_batch):
// whether its process ended during the check (a crash or timeout row the parent made for the
// check, and the same for the timing), so that the timing never started. Its timing then runs
// in a job of its own, as it would have in a pass of its own.
bool ended_before_timing(const JobPlan& job, const std::vector<ResultRow>& rows);

// The rows of a job that ran with no other model of the run on its GPU: each that ran out of
// memory while other processes held some of the GPU (PyTorch's message names them; another
// command on the same GPU, say) gets its reason prefixed with how much they held, so that the
// OOM is not read as the model's own need.
void note_memory_of_other_processes(std::vector<ResultRow>& rows);

// A row for every requested experiment (and input layout) of a model whose export failed:
// model_fail_to_load, with the exporter's reason and its log.
std::vector<ResultRow> export_failure_rows(const JobPlan& job, const std::string& device,
                                           const ModelSupply& supply);

// The cells every row of `job` on `device` shares (batch size from its manifest when it reads).
RowContext context_for(const JobPlan& job, const std::string& device, const std::string& log);

}  // namespace zoobench
