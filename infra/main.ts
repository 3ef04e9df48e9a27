/** Entry point of `cdk synth` / `cdk deploy` (see cdk.json). */
import { App } from 'aws-cdk-lib';
import { buildApp } from './app.ts';

const app = new App();
buildApp(app);
app.synth();
