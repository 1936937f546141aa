import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { ToolArgumentError, type ToolInputSchema } from '../site-tool.ts';

export type ArgumentCheck = (args: Record<string, unknown>) => void;

/**
 * Compiles a tool's input schema into a check that throws `ToolArgumentError` naming the first field
 * that does not fit. OpenAPI 3.0 schemas are checked as draft-07 (Ajv reads 3.0's `nullable`), 3.1 as
 * JSON Schema 2020-12. Formats and unknown keywords (`example`, `xml`, ...) are not checked: the
 * site has the last word; this only catches what the model got wrong in the shape.
 */
export function argumentCheck(schema: ToolInputSchema, dialect: '3.0' | '3.1'): ArgumentCheck {
  const ajv = dialect === '3.0' ? new Ajv({ strict: false, validateFormats: false }) : new Ajv2020({ strict: false, validateFormats: false });
  const validate: ValidateFunction = ajv.compile(schema);
  return (args) => {
    if (validate(args)) return;
    const error = validate.errors?.[0];
    throw error === undefined ? new ToolArgumentError('arguments', 'do not fit the tool') : toArgumentError(error);
  };
}

function toArgumentError(e: ErrorObject): ToolArgumentError {
  const at = fieldOf(e.instancePath);
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return new ToolArgumentError(join(at, String(params['missingProperty'])), 'is required');
    case 'additionalProperties':
      return new ToolArgumentError(join(at, String(params['additionalProperty'])), at === '' ? 'is not an argument of this tool' : 'is not allowed here');
    case 'enum':
      return new ToolArgumentError(at || 'arguments', `must be one of ${(params['allowedValues'] as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`);
    default:
      return new ToolArgumentError(at || 'arguments', e.message ?? `fails ${e.keyword}`);
  }
}

/** `/body/items/0/name` → `body.items[0].name`. */
function fieldOf(instancePath: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((field, s) => (/^\d+$/.test(s) ? `${field}[${s}]` : join(field, s)), '');
}

function join(parent: string, child: string): string {
  return parent === '' ? child : `${parent}.${child}`;
}
