/** Injection tokens of the budgets module. */
export const BUDGETS_SETTINGS = Symbol('tollgate:budgets-settings');
export const BUDGET_ENGINE = Symbol('tollgate:budget-engine');
export const BUDGET_RULE_STORE = Symbol('tollgate:budget-rule-store');
