//! RFC-0024's "Quarterly Compliance Report", run end to end with four small typed cores.
//!
//! The executor owns the wiring: each core receives a pre-populated, validated input and
//! returns a plain value; the executor checks the typed wiring before anything runs, runs the
//! two fetch phases concurrently, validates every output against the phase's declarations, and
//! records the named errors as events.
//!
//! Run it with `cargo run --example workflow`.

use agentio::core::{AgentContext, AgentCore, AgentError};
use agentio::io;
use agentio::serde_json::json;
use agentio::workflow::{Executor, Workflow};

const WORKFLOW: &str = include_str!("workflows/quarterly-compliance.yaml");

#[io(input)]
struct FinancialsInput {
    quarter: String,
    source: String,
}

#[io(output)]
struct FinancialsOutput {
    revenue: f64,
    expenses: f64,
}

/// Reads the quarter's ledger (here, a fixed table).
struct FinancialsCore;

impl AgentCore for FinancialsCore {
    type Input = FinancialsInput;
    type Output = FinancialsOutput;

    fn core_type(&self) -> &str {
        "financials"
    }

    async fn run_turn(
        &mut self,
        input: FinancialsInput,
        _: &mut AgentContext,
    ) -> Result<FinancialsOutput, AgentError> {
        println!(
            "  fetch_financials: {} from {}",
            input.quarter, input.source
        );
        Ok(FinancialsOutput {
            revenue: 1_250_000.0,
            expenses: 1_410_000.0,
        })
    }
}

#[io(input)]
struct HrInput {
    quarter: String,
}

#[io(output)]
struct HrOutput {
    headcount: u32,
    attrition_rate: f64,
}

/// Reads the HR system (here, a fixed table).
struct HrCore;

impl AgentCore for HrCore {
    type Input = HrInput;
    type Output = HrOutput;

    fn core_type(&self) -> &str {
        "hr"
    }

    async fn run_turn(
        &mut self,
        input: HrInput,
        _: &mut AgentContext,
    ) -> Result<HrOutput, AgentError> {
        println!("  fetch_hr_data: {}", input.quarter);
        Ok(HrOutput {
            headcount: 212,
            attrition_rate: 0.19,
        })
    }
}

#[io(input)]
struct AnalysisInput {
    fin_revenue: f64,
    fin_expenses: f64,
    hr_headcount: f64,
    hr_attrition: f64,
}

#[io(output)]
struct AnalysisOutput {
    findings: Vec<String>,
    risk_level: String,
    violations_found: bool,
}

/// Applies two compliance rules.
struct AnalysisCore;

impl AgentCore for AnalysisCore {
    type Input = AnalysisInput;
    type Output = AnalysisOutput;

    fn core_type(&self) -> &str {
        "analysis"
    }

    async fn run_turn(
        &mut self,
        input: AnalysisInput,
        _: &mut AgentContext,
    ) -> Result<AnalysisOutput, AgentError> {
        let mut findings = Vec::new();
        if input.fin_expenses > input.fin_revenue {
            findings.push(format!(
                "operating loss of {:.0}",
                input.fin_expenses - input.fin_revenue
            ));
        }
        if input.hr_attrition > 0.15 {
            findings.push(format!(
                "attrition {:.0}% above the 15% threshold ({} staff)",
                input.hr_attrition * 100.0,
                input.hr_headcount
            ));
        }
        let risk_level = if findings.len() > 1 { "high" } else { "low" }.to_owned();
        println!("  run_analysis: {} finding(s)", findings.len());
        Ok(AnalysisOutput {
            violations_found: !findings.is_empty(),
            findings,
            risk_level,
        })
    }
}

#[io(input)]
struct ReportInput {
    analysis_findings: Vec<String>,
    risk_level: String,
    has_violations: bool,
}

#[io(output)]
struct ReportOutput {
    report_url: String,
    report_summary: String,
}

/// Writes the report.
struct ReportCore;

impl AgentCore for ReportCore {
    type Input = ReportInput;
    type Output = ReportOutput;

    fn core_type(&self) -> &str {
        "report"
    }

    async fn run_turn(
        &mut self,
        input: ReportInput,
        _: &mut AgentContext,
    ) -> Result<ReportOutput, AgentError> {
        println!("  generate_report: risk {}", input.risk_level);
        Ok(ReportOutput {
            report_url: "https://reports.example/q3-compliance".into(),
            report_summary: format!(
                "{} risk; violations: {}; {}",
                input.risk_level,
                input.has_violations,
                input.analysis_findings.join("; ")
            ),
        })
    }
}

#[io(input)]
struct StrictAnalysisInput {
    fin_revenue: f64,
    fin_expenses: f64,
    /// An integer field, wired from an output declared `number`.
    hr_headcount: u32,
    hr_attrition: f64,
}

/// The same analysis with an integer headcount: a wiring mistake the executor finds at load.
struct StrictAnalysisCore;

impl AgentCore for StrictAnalysisCore {
    type Input = StrictAnalysisInput;
    type Output = AnalysisOutput;

    fn core_type(&self) -> &str {
        "strict-analysis"
    }

    async fn run_turn(
        &mut self,
        _: StrictAnalysisInput,
        _: &mut AgentContext,
    ) -> Result<AnalysisOutput, AgentError> {
        Ok(AnalysisOutput {
            findings: Vec::new(),
            risk_level: "low".into(),
            violations_found: false,
        })
    }
}

fn main() {
    let workflow = Workflow::from_yaml(WORKFLOW).expect("the example workflow is valid");
    let runtime = agentio::tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a Tokio runtime");

    println!(
        "== {} (levels: {:?})",
        workflow.name,
        workflow.levels().unwrap_or_default()
    );
    let executor = Executor::new(workflow.clone())
        .bind_phase_core("fetch_financials", FinancialsCore)
        .bind_phase_core("fetch_hr_data", HrCore)
        .bind_core("analytics-agent", AnalysisCore)
        .bind_core("reporting-agent", ReportCore);
    let outcome = runtime
        .block_on(executor.run(
            "q3",
            json!({ "quarter": "2026-Q3" }),
            json!({ "source": "erp" }),
        ))
        .expect("the wiring checks pass");
    println!("\n== outputs");
    for phase in &workflow.phases {
        println!(
            "  {:<17} {}",
            phase.name,
            agentio::serde_json::to_string(&outcome.outputs[&phase.name]).unwrap_or_default()
        );
    }
    println!("  all phases completed: {}", outcome.succeeded());

    println!("\n== a run whose trigger lacks the quarter");
    let outcome = runtime
        .block_on(executor.run("q4", json!({}), json!({ "source": "erp" })))
        .expect("checks pass");
    for event in &outcome.events {
        println!("  event: {event}");
    }
    println!(
        "  progress: {}",
        agentio::serde_json::to_string(&outcome.progress).unwrap_or_default()
    );

    println!("\n== a wiring mistake, found before anything runs");
    let miswired = Executor::new(workflow)
        .bind_phase_core("fetch_financials", FinancialsCore)
        .bind_phase_core("fetch_hr_data", HrCore)
        .bind_core("analytics-agent", StrictAnalysisCore)
        .bind_core("reporting-agent", ReportCore);
    for problem in miswired.check() {
        println!("  {}", problem.to_json());
    }
}
