import { TOOL_TIMEOUT_DEFAULT, createToolRequest, updateToolRequest } from '../service/schema/requests.js';
import { json, message, validationFailed, type Handler } from './http-util.js';
import { parseWith } from './pagination.js';
import { toolRecord } from './records.js';
import type { SimTool } from './types.js';

/** POST /api/user/tools (4.1): 201, or 422 by field, or 422 `message` only at the plan limit. */
export function createTool(toolLimit: number): Handler {
  return ({ body, state, user, clock }) => {
    const parsed = parseWith(createToolRequest, body);
    if (!parsed.ok) return validationFailed(parsed.errors);
    if (state.allOf(state.tools, user.id).length >= toolLimit) {
      return message(422, `You have reached the maximum number of mid call tools (${toolLimit}) allowed by your plan.`);
    }
    const now = clock.now();
    const d = parsed.data;
    const tool: SimTool = {
      id: state.nextId('tool'),
      userId: user.id,
      name: d.name,
      description: d.description,
      endpoint: d.endpoint,
      method: d.method,
      timeout: d.timeout ?? TOOL_TIMEOUT_DEFAULT,
      headers: d.headers ?? [],
      schema: d.schema ?? [],
      createdAt: now,
      updatedAt: now,
    };
    state.tools.set(tool.id, tool);
    return json(201, { message: 'Tool created successfully', data: toolRecord(tool) });
  };
}

/** PUT /api/user/tools/{id} (4.2): supplied fields replace stored ones (arrays too). */
export const updateTool: Handler = ({ body, state, user, clock, params }) => {
  const tool = state.owned(state.tools, Number(params.id), user.id);
  if (!tool) return message(404, 'Tool not found');
  const parsed = parseWith(updateToolRequest, body);
  if (!parsed.ok) return validationFailed(parsed.errors);
  const d = parsed.data;
  if (d.name !== undefined) tool.name = d.name;
  if (d.description !== undefined) tool.description = d.description;
  if (d.endpoint !== undefined) tool.endpoint = d.endpoint;
  if (d.method !== undefined) tool.method = d.method;
  if (d.timeout !== undefined) tool.timeout = d.timeout;
  if (d.headers !== undefined) tool.headers = d.headers;
  if (d.schema !== undefined) tool.schema = d.schema;
  tool.updatedAt = clock.now();
  return json(200, { message: 'Tool updated successfully', data: toolRecord(tool) });
};
